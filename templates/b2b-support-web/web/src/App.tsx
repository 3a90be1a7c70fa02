import { LiveTickets } from './components/LiveTickets.tsx';
import { TicketForm } from './components/TicketForm.tsx';
import { TicketsByStatus } from './components/TicketsByStatus.tsx';

export function App() {
  return (
    <main>
      <h1>Support desk</h1>
      <TicketForm />
      <div className="panels">
        <LiveTickets />
        <TicketsByStatus />
      </div>
    </main>
  );
}
